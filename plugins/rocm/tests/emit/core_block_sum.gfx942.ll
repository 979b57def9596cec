; tilec rocm backend: amdgcn-amd-amdhsa for gfx942
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

@block_sum.lds = internal addrspace(3) global [32 x i8] undef, align 16

define amdgpu_kernel void @block_sum(ptr addrspace(1) %p0, ptr addrspace(1) %p1, i32 %p2) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 256}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca float, addrspace(5)
  store float 0.0, ptr addrspace(5) %r0
  %r1 = alloca float, addrspace(5)
  store float 0.0, ptr addrspace(5) %r1
  %r2 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r2
  %r3 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r3
  %r4 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r4
  %cnt0 = alloca i64, addrspace(5)
  %cnt3 = alloca i64, addrspace(5)
  %cnt13 = alloca i64, addrspace(5)
  store float 0x0000000000000000, ptr addrspace(5) %r0
  %v0 = sub i32 %p2, %tid
  %v1 = add i32 %v0, 255
  %v2 = sdiv i32 %v1, 256
  %v3 = srem i32 %v1, 256
  %v4 = icmp ne i32 %v3, 0
  %v5 = xor i32 %v3, 256
  %v6 = icmp slt i32 %v5, 0
  %v7 = and i1 %v4, %v6
  %v8 = zext i1 %v7 to i32
  %v9 = sub i32 %v2, %v8
  %v10 = sext i32 %v9 to i64
  store i64 0, ptr addrspace(5) %cnt0
  br label %loop0
loop0:
  %v11 = load i64, ptr addrspace(5) %cnt0
  %v12 = icmp slt i64 %v11, %v10
  br i1 %v12, label %body1, label %exit2
body1:
  %v13 = trunc i64 %v11 to i32
  %v14 = mul i32 %v13, 256
  %v15 = add i32 %tid, %v14
  store i32 %v15, ptr addrspace(5) %r2
  %v16 = load i32, ptr addrspace(5) %r2
  %v17 = sext i32 %v16 to i64
  %v18 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v17
  %v19 = load float, ptr addrspace(1) %v18, align 4
  store float %v19, ptr addrspace(5) %r1
  %v20 = load float, ptr addrspace(5) %r0
  %v21 = load float, ptr addrspace(5) %r1
  %v22 = fadd float %v20, %v21
  store float %v22, ptr addrspace(5) %r0
  %v23 = load i64, ptr addrspace(5) %cnt0
  %v24 = add i64 %v23, 1
  store i64 %v24, ptr addrspace(5) %cnt0
  br label %loop0
exit2:
  %v25 = sext i32 5 to i64
  store i64 0, ptr addrspace(5) %cnt3
  br label %loop3
loop3:
  %v26 = load i64, ptr addrspace(5) %cnt3
  %v27 = icmp slt i64 %v26, %v25
  br i1 %v27, label %body4, label %exit5
body4:
  %v28 = trunc i64 %v26 to i32
  %v29 = mul i32 %v28, 1
  %v30 = add i32 0, %v29
  store i32 %v30, ptr addrspace(5) %r3
  %v31 = load float, ptr addrspace(5) %r0
  %v32 = bitcast float %v31 to i32
  %v33 = load i32, ptr addrspace(5) %r3
  %v34 = icmp ult i32 %v33, 32
  %v35 = select i1 %v34, i32 %v33, i32 31
  %v36 = ashr i32 16, %v35
  %v37 = and i32 %lane, -32
  %v38 = xor i32 %lane, %v36
  %v39 = icmp sge i32 %v38, %v37
  %v40 = add i32 %v37, 32
  %v41 = icmp slt i32 %v38, %v40
  %v42 = and i1 %v39, %v41
  %v43 = select i1 %v42, i32 %v38, i32 %lane
  %v44 = shl i32 %v43, 2
  %v45 = call i32 @llvm.amdgcn.ds.bpermute(i32 %v44, i32 %v32)
  %v46 = bitcast i32 %v45 to float
  store float %v46, ptr addrspace(5) %r1
  %v47 = load float, ptr addrspace(5) %r0
  %v48 = load float, ptr addrspace(5) %r1
  %v49 = fadd float %v47, %v48
  store float %v49, ptr addrspace(5) %r0
  %v50 = load i64, ptr addrspace(5) %cnt3
  %v51 = add i64 %v50, 1
  store i64 %v51, ptr addrspace(5) %cnt3
  br label %loop3, !llvm.loop !2
exit5:
  %v52 = icmp eq i32 %lane, 0
  br i1 %v52, label %then6, label %endif7
then6:
  %v53 = load float, ptr addrspace(5) %r0
  %v54 = getelementptr inbounds i8, ptr addrspace(3) @block_sum.lds, i32 0
  %v55 = getelementptr inbounds float, ptr addrspace(3) %v54, i32 %wave
  store float %v53, ptr addrspace(3) %v55, align 4
  br label %endif7
endif7:
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %v56 = icmp eq i32 %wave, 0
  br i1 %v56, label %then8, label %endif9
then8:
  %v57 = icmp slt i32 %lane, 8
  br i1 %v57, label %then10, label %else12
then10:
  %v58 = getelementptr inbounds i8, ptr addrspace(3) @block_sum.lds, i32 0
  %v59 = getelementptr inbounds float, ptr addrspace(3) %v58, i32 %lane
  %v60 = load float, ptr addrspace(3) %v59, align 4
  store float %v60, ptr addrspace(5) %r0
  br label %endif11
else12:
  store float 0x0000000000000000, ptr addrspace(5) %r0
  br label %endif11
endif11:
  %v61 = sext i32 3 to i64
  store i64 0, ptr addrspace(5) %cnt13
  br label %loop13
loop13:
  %v62 = load i64, ptr addrspace(5) %cnt13
  %v63 = icmp slt i64 %v62, %v61
  br i1 %v63, label %body14, label %exit15
body14:
  %v64 = trunc i64 %v62 to i32
  %v65 = mul i32 %v64, 1
  %v66 = add i32 0, %v65
  store i32 %v66, ptr addrspace(5) %r4
  %v67 = load float, ptr addrspace(5) %r0
  %v68 = bitcast float %v67 to i32
  %v69 = load i32, ptr addrspace(5) %r4
  %v70 = icmp ult i32 %v69, 32
  %v71 = select i1 %v70, i32 %v69, i32 31
  %v72 = ashr i32 4, %v71
  %v73 = and i32 %lane, -32
  %v74 = xor i32 %lane, %v72
  %v75 = icmp sge i32 %v74, %v73
  %v76 = add i32 %v73, 32
  %v77 = icmp slt i32 %v74, %v76
  %v78 = and i1 %v75, %v77
  %v79 = select i1 %v78, i32 %v74, i32 %lane
  %v80 = shl i32 %v79, 2
  %v81 = call i32 @llvm.amdgcn.ds.bpermute(i32 %v80, i32 %v68)
  %v82 = bitcast i32 %v81 to float
  store float %v82, ptr addrspace(5) %r1
  %v83 = load float, ptr addrspace(5) %r0
  %v84 = load float, ptr addrspace(5) %r1
  %v85 = fadd float %v83, %v84
  store float %v85, ptr addrspace(5) %r0
  %v86 = load i64, ptr addrspace(5) %cnt13
  %v87 = add i64 %v86, 1
  store i64 %v87, ptr addrspace(5) %cnt13
  br label %loop13, !llvm.loop !4
exit15:
  %v88 = icmp eq i32 %lane, 0
  br i1 %v88, label %then16, label %endif17
then16:
  %v89 = load float, ptr addrspace(5) %r0
  %v90 = getelementptr inbounds float, ptr addrspace(1) %p1, i64 0
  store float %v89, ptr addrspace(1) %v90, align 4
  br label %endif17
endif17:
  br label %endif9
endif9:
  ret void
}

declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare void @llvm.amdgcn.s.barrier()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="256,256" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
!1 = !{!"llvm.loop.unroll.full"}
!2 = distinct !{!2, !1}
!3 = !{!"llvm.loop.unroll.full"}
!4 = distinct !{!4, !3}
